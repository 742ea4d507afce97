"""The wire contract: what a caller of the platform's gRPC API needs besides the generated code
(the `tabletop` package): which service serves each game (`api`), the metadata the platform
sets (`metadata`), player ids (`players`), error reasons and how they travel (`errors`), and game
statuses (`status`). It knows no engine: the gateway and any client use it alone."""
