"""A per-run certificate authority (cryptography), and the TLS server contexts it signs.

The CA's private key lives in memory for the life of the proxy; only its certificate is written,
to ``<folder>/ca.pem``, for the process under test (``SSL_CERT_FILE``, ``REQUESTS_CA_BUNDLE``,
``NODE_EXTRA_CA_CERTS``, ``CURL_CA_BUNDLE``). Nothing is reused between runs of guardbench and
nothing is committed: the folder is a temporary one the proxy removes when it closes.

Keys are EC P-256. The CA has BasicConstraints ca=True (path length 0) and KeyUsage
keyCertSign; each leaf has the host as its only subject alternative name, serverAuth and the
CA's key identifier, and is valid for a day. ``ssl.SSLContext.load_cert_chain`` reads only
files, so each leaf is written to a 0600 file in the folder, loaded, and unlinked at once.
"""
from __future__ import annotations

import datetime as dt
import ipaddress
import os
import ssl
import threading
from pathlib import Path
from typing import Any

CA_FILE = "ca.pem"


class RunCA:
    def __init__(self, folder: str | os.PathLike) -> None:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID

        self._x509, self._hashes, self._ser = x509, hashes, serialization
        self.folder = Path(folder)
        self._key = ec.generate_private_key(ec.SECP256R1())
        self._leaf_key = ec.generate_private_key(ec.SECP256R1())     # one leaf key per run
        self._name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "guardbench per-run CA"),
                                x509.NameAttribute(NameOID.ORGANIZATION_NAME, "guardbench")])
        now = dt.datetime.now(dt.timezone.utc)
        pub = self._key.public_key()
        self.cert = (x509.CertificateBuilder().subject_name(self._name).issuer_name(self._name)
                     .public_key(pub).serial_number(x509.random_serial_number())
                     .not_valid_before(now - dt.timedelta(hours=1))
                     .not_valid_after(now + dt.timedelta(days=2))
                     .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
                     .add_extension(x509.KeyUsage(digital_signature=True,
                                                  key_cert_sign=True, crl_sign=True,
                                                  content_commitment=False, key_encipherment=False,
                                                  data_encipherment=False, key_agreement=False,
                                                  encipher_only=False,
                                                  decipher_only=False), critical=True)
                     .add_extension(x509.SubjectKeyIdentifier.from_public_key(pub), critical=False)
                     .sign(self._key, hashes.SHA256()))
        self.path = self.folder / CA_FILE
        self.path.write_bytes(self.cert.public_bytes(serialization.Encoding.PEM))
        self._contexts: dict[str, ssl.SSLContext] = {}
        self._lock = threading.Lock()
        self._n = 0

    @property
    def pem(self) -> bytes:
        return self.path.read_bytes()

    def context(self, host: str) -> ssl.SSLContext:
        """A TLS server context presenting a leaf for ``host`` (cached per host)."""
        host = host.lower()
        with self._lock:
            ctx = self._contexts.get(host)
            if ctx is None:
                ctx = self._contexts[host] = self._make(host)
            return ctx

    def _make(self, host: str) -> ssl.SSLContext:
        x509, ser = self._x509, self._ser
        from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
        now = dt.datetime.now(dt.timezone.utc)
        try:
            sans: list[Any] = [x509.IPAddress(ipaddress.ip_address(host))]
        # the name with its trailing dot too: a client may verify either spelling
        except ValueError:
            sans = [x509.DNSName(host.rstrip(".")), x509.DNSName(host.rstrip(".") + ".")]
        leaf = (x509.CertificateBuilder()
                .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME,
                                                            host[:64] or "host")]))
                .issuer_name(self._name).public_key(self._leaf_key.public_key())
                .serial_number(x509.random_serial_number())
                .not_valid_before(now - dt.timedelta(hours=1))
                .not_valid_after(now + dt.timedelta(days=1))
                .add_extension(x509.SubjectAlternativeName(sans), critical=False)
                .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]),
                               critical=False)
                .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(self._key.public_key()),
                               critical=False)
                .sign(self._key, self._hashes.SHA256()))
        self._n += 1
        path = self.folder / f"leaf-{self._n}.pem"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(leaf.public_bytes(ser.Encoding.PEM))
                fh.write(self._leaf_key.private_bytes(ser.Encoding.PEM, ser.PrivateFormat.PKCS8,
                                                      ser.NoEncryption()))
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.minimum_version = ssl.TLSVersion.TLSv1_2
            ctx.set_alpn_protocols(["http/1.1"])
            ctx.load_cert_chain(path)
        finally:
            path.unlink(missing_ok=True)
        return ctx


CA_VARIABLES = ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS", "CURL_CA_BUNDLE")
PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy")
# a NO_PROXY from guardbench's own environment would let the process past the proxy
CLEARED_VARIABLES = ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "SSL_CERT_DIR")


def proxy_environment(proxy_url: str, ca_path: str | os.PathLike) -> dict[str, str]:
    """The variables a process reads to use the proxy and trust the run's CA (every common client:
    Python's ssl/httpx/urllib, requests, Node, curl). The cleared ones are set to ''."""
    env = {k: proxy_url for k in PROXY_VARIABLES}
    env.update({k: str(ca_path) for k in CA_VARIABLES})
    env.update({k: "" for k in CLEARED_VARIABLES})
    return env
