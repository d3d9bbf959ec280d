"""The security tests' fixtures (the secured broker and the OAuth server) are in ``tests/integration/conftest.py``:
the Spark jobs' tests use the same broker."""
