"""Cloud Storage: PyPI's ``gcp-storage-emulator``, run in this process on 127.0.0.1 and stopped with the rest.

Clients reach it with ``STORAGE_EMULATOR_HOST=http://127.0.0.1:PORT`` (what ``google.cloud.storage.Client``
reads) or ``client_options={"api_endpoint": ...}`` with ``AnonymousCredentials()``.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from tfcloud.emulator.replicas import free_port

__all__ = ["StorageEmulator"]


class StorageEmulator:
    """One gcp-storage-emulator server: in memory, or kept in ``data_dir``."""

    def __init__(self, *, port: int = 0, data_dir: Path | None = None) -> None:
        self._port = port
        self._data_dir = data_dir
        self._server: Any = None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self._port}"

    def start(self) -> None:
        from gcp_storage_emulator.server import create_server

        # Its request log goes to the root logger at INFO; keep it out of the way.
        logging.getLogger("gcp_storage_emulator").setLevel(logging.WARNING)
        if not self._port:
            self._port = free_port()
        self._server = create_server(
            "127.0.0.1", self._port, in_memory=self._data_dir is None,
            data_dir=str(self._data_dir) if self._data_dir else None)
        self._server.start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None
