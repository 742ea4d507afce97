"""`python -m services.accounts`: the accounts service (see services/accounts/main.py)."""

from services.accounts.main import run_accounts_service

if __name__ == "__main__":
    run_accounts_service()
