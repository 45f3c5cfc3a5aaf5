import tempfile
from pathlib import Path

import pytest

from test_mcp_e2e import Daemon


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: waits minutes of wall time (idle sessions); scripts/test runs it alongside the rest")


@pytest.fixture
def daemon():
    """A `tether serve` on 127.0.0.1:0 over a generated Cursor home, stopped (SIGTERM, exit 0) after the test."""
    with tempfile.TemporaryDirectory() as d:
        dm = Daemon(Path(d)).start()
        try:
            yield dm
        finally:
            dm.stop()
