"""A throw-away certificate authority for the secured test broker: a CA, a broker certificate for 127.0.0.1 and
localhost, a client certificate, and the same material as PEM, PKCS12 and JKS stores (openssl and keytool)."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from stack.procs import StackError

PASSWORD = "test-store-pass"


@dataclass(frozen=True)
class Pki:
    """Paths of the generated material; every store is protected with :data:`PASSWORD`."""

    dir: Path
    ca_pem: Path
    broker_p12: Path
    client_key_pem: Path  # unencrypted PKCS#8
    client_key_encrypted_pem: Path  # encrypted with PASSWORD
    client_cert_pem: Path
    client_p12: Path
    client_jks: Path
    truststore_p12: Path
    truststore_jks: Path
    other_ca_pem: Path  # a CA that signed nothing the broker uses
    other_truststore_p12: Path


def _run(cmd: list[str], cwd: Path) -> None:
    result = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False, timeout=120)
    if result.returncode != 0:
        raise StackError(f"{' '.join(cmd[:3])} failed: {result.stderr[-2000:]}")


def _ca(d: Path, name: str) -> None:
    _run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "30", "-subj", f"/CN={name}",
          "-keyout", f"{name}.key", "-out", f"{name}.pem", "-addext", "basicConstraints=critical,CA:TRUE",
          "-addext", "keyUsage=critical,keyCertSign,cRLSign"], d)


def _leaf(d: Path, name: str, ca: str, san: str) -> None:
    _run(["openssl", "req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={name}", "-keyout", f"{name}.key",
          "-out", f"{name}.csr"], d)
    (d / f"{name}.ext").write_text(f"subjectAltName={san}\nbasicConstraints=CA:FALSE\n")
    _run(["openssl", "x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}.key",
          "-CAcreateserial", "-days", "30", "-extfile", f"{name}.ext", "-out", f"{name}.pem"], d)
    _run(["openssl", "pkcs12", "-export", "-in", f"{name}.pem", "-inkey", f"{name}.key", "-certfile", f"{ca}.pem",
          "-name", name, "-out", f"{name}.p12", "-passout", f"pass:{PASSWORD}"], d)


def _keytool() -> str:
    path = shutil.which("keytool")
    if path is None:
        raise StackError("keytool (from a JDK) is needed to write JKS stores")
    return path


def _truststore(d: Path, ca: str, out: str, kind: str) -> None:
    _run([_keytool(), "-importcert", "-noprompt", "-alias", ca, "-file", f"{ca}.pem", "-keystore", out,
          "-storetype", kind, "-storepass", PASSWORD], d)


def make_pki(d: Path) -> Pki:
    """Generate everything into ``d`` (kept when already there)."""
    d.mkdir(parents=True, exist_ok=True)
    if not (d / "done").is_file():
        _ca(d, "ca")
        _ca(d, "other-ca")
        _leaf(d, "broker", "ca", "DNS:localhost,IP:127.0.0.1")
        _leaf(d, "client", "ca", "DNS:client")
        _run(["openssl", "pkcs8", "-topk8", "-in", "client.key", "-out", "client-encrypted.key",
              "-passout", f"pass:{PASSWORD}"], d)
        _run([_keytool(), "-importkeystore", "-srckeystore", "client.p12", "-srcstoretype", "PKCS12",
              "-srcstorepass", PASSWORD, "-destkeystore", "client.jks", "-deststoretype", "JKS",
              "-deststorepass", PASSWORD, "-destkeypass", PASSWORD, "-noprompt"], d)
        _truststore(d, "ca", "truststore.p12", "PKCS12")
        _truststore(d, "ca", "truststore.jks", "JKS")
        _truststore(d, "other-ca", "other-truststore.p12", "PKCS12")
        (d / "done").write_text("ok\n")
    return Pki(d, d / "ca.pem", d / "broker.p12", d / "client.key", d / "client-encrypted.key", d / "client.pem",
               d / "client.p12", d / "client.jks", d / "truststore.p12", d / "truststore.jks", d / "other-ca.pem",
               d / "other-truststore.p12")
