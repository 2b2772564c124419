"""The emulator's TLS identity: a self-signed certificate for ``127.0.0.1`` and ``localhost``, made at start.

Google's client libraries dial TLS to any ``api_endpoint`` (``client_options``, ``aiplatform.init``), so the
emulator serves its gRPC services on a TLS port too. A client trusts it through the roots file gRPC's core reads
from ``GRPC_DEFAULT_SSL_ROOTS_FILE_PATH``: :func:`write_roots` writes the emulator's certificate followed by
gRPC's own bundled roots, so the same process can still reach Google itself. gRPC reads the variable once, when
the process opens its first TLS channel: it must be set before that (in the shell, or in ``os.environ`` before
any Google client is made).
"""

from __future__ import annotations

import datetime as dt
import ipaddress
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ROOTS_VARIABLE", "Identity", "make_identity", "write_roots"]

#: The variable gRPC's core reads for its root certificates (``grpc_core::ConfigVars``).
ROOTS_VARIABLE = "GRPC_DEFAULT_SSL_ROOTS_FILE_PATH"


@dataclass(frozen=True, kw_only=True)
class Identity:
    """A PEM certificate and its PEM (PKCS #8) private key."""

    certificate: bytes
    private_key: bytes


def make_identity(*, days: int = 30) -> Identity:
    """A new P-256 key and a self-signed certificate for ``127.0.0.1``, ``::1`` and ``localhost``, valid from
    five minutes ago for ``days`` days."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "tfcloud emulator")])
    now = dt.datetime.now(dt.timezone.utc)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + dt.timedelta(days=days))
        .add_extension(x509.SubjectAlternativeName([
            x509.DNSName("localhost"),
            x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
            x509.IPAddress(ipaddress.ip_address("::1")),
        ]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    return Identity(
        certificate=certificate.public_bytes(serialization.Encoding.PEM),
        private_key=key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                      serialization.NoEncryption()))


def write_roots(identity: Identity, path: Path) -> Path:
    """Write the roots file a client points ``GRPC_DEFAULT_SSL_ROOTS_FILE_PATH`` at: the emulator's certificate,
    then the roots gRPC ships (when it ships them), so that Google's own endpoints stay trusted."""
    import grpc

    bundled = Path(grpc.__file__).parent / "_cython" / "_credentials" / "roots.pem"
    roots = identity.certificate + (b"\n" + bundled.read_bytes() if bundled.is_file() else b"")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(roots)
    return path
