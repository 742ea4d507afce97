"""Platform plumbing shared by every process: Redis (connection, key names, the bot-turn stream),
gRPC servers (health, reflection, graceful stop, relay links), settings, logs and metrics,
local redis-servers and launching the platform's processes."""

from runtime.cancellation import keep_cancellations

keep_cancellations()  # before any process awaits anything: runtime/cancellation.py says why
