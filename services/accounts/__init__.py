"""Accounts: usernames and passwords, sessions, API tokens and guest tokens' endings, kept in
PostgreSQL, served to the gateway by a process of their own (`python -m services.accounts`)."""
