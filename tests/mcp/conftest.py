def pytest_configure(config):
    config.addinivalue_line("markers", "slow: waits minutes of wall time (idle sessions); scripts/test runs it alongside the rest")
