"""The container image, really built and run (`sh .ci/dev container`).

Podman runs on these machines with three adjustments: the `runc` runtime
(`crun` refuses the hybrid cgroup layout), and a `CONTAINERS_CONF` with
`default_ulimits = []` and `cgroup_manager = "cgroupfs"`. No registry is
reachable, so the base is `debootstrap --variant=minbase bookworm` from the
configured Debian mirror, imported with `podman import` (kept as
`localhost/transcriber-base:bookworm` for the next run), and the Python
packages come from a wheelhouse `pip download` fills on the host, mounted
into the build. The image is built on that base, run as its unprivileged
user with the data folder as a volume; a clip is uploaded and its
transcript (the real Whisper model) read back.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.processes import free_port

# The first run makes the base (debootstrap, minutes); a build takes about 80 s here.
pytestmark = [pytest.mark.container, pytest.mark.timeout(1800)]

REPO = Path(__file__).resolve().parents[2]
AUDIO = REPO / "tests" / "fixtures" / "audio" / "librivox_0880.mp3"
BASE = "localhost/transcriber-base:bookworm"
IMAGE = "localhost/transcriber:test"
BASE_PACKAGES = "python3,python3-venv,curl,ca-certificates"
CONTAINERS_CONF = """\
[containers]
default_ulimits = []

[engine]
cgroup_manager = "cgroupfs"
runtime = "runc"
"""
EXPECTED_WORDS = ("ill", "disposed", "young", "man")


def _need(*tools: str) -> None:
    missing = [tool for tool in tools if shutil.which(tool) is None]
    if missing:
        pytest.fail(f"missing {', '.join(missing)} (sh .ci/dev container installs them)")


@pytest.fixture(scope="module")
def podman_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    _need("podman", "runc", "debootstrap")
    conf = tmp_path_factory.mktemp("podman") / "containers.conf"
    conf.write_text(CONTAINERS_CONF)
    return {**os.environ, "CONTAINERS_CONF": str(conf)}


def _run(env: dict[str, str], *argv: str, timeout: float = 900,
         stdin: int | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout,
                          check=False, stdin=stdin)
    assert done.returncode == 0, f"{argv[:3]}: {done.stdout[-2000:]}{done.stderr[-4000:]}"
    return done


def _ensure_base(env: dict[str, str], scratch: Path) -> None:
    if subprocess.run(["podman", "image", "exists", BASE], env=env, check=False).returncode == 0:
        return
    root = scratch / "rootfs"
    _run(env, "debootstrap", "--variant=minbase", f"--include={BASE_PACKAGES}", "bookworm",
         str(root), timeout=1200)
    with subprocess.Popen(["tar", "-C", str(root), "-c", "."], stdout=subprocess.PIPE) as tar:
        _run(env, "podman", "import", "-", BASE, stdin=tar.stdout.fileno() if tar.stdout else None)
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def image(podman_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> str:
    scratch = tmp_path_factory.mktemp("image")
    _ensure_base(podman_env, scratch)
    wheelhouse = scratch / "wheelhouse"
    pip = [sys.executable, "-m", "pip", "download", "-q", "-d", str(wheelhouse)]
    _run(podman_env, *pip, "--only-binary=:all:", str(REPO))
    _run(podman_env, *pip, "setuptools>=77", "wheel")
    started = time.monotonic()
    _run(podman_env, "podman", "build", "--format=docker", "--network=host", "-t", IMAGE,
         "--build-arg", f"BASE_IMAGE={BASE}",
         "--build-arg", "PIP_OPTIONS=--no-index --find-links /wheelhouse",
         "-v", f"{wheelhouse}:/wheelhouse:ro", "-f", str(REPO / "Containerfile"), str(REPO))
    print(f"\ncontainer_build_seconds={time.monotonic() - started:.0f}")
    return IMAGE


@contextlib.contextmanager
def _container(env: dict[str, str], image: str, data: Path, port: int) -> Iterator[str]:
    name = f"transcriber-test-{port}"
    _run(env, "podman", "run", "-d", "--name", name, "--network=host",
         "-v", f"{data}:/data", "-e", f"TRANSCRIBER_SERVER_PORT={port}",
         # The host's network, so loopback: the anonymous user is allowed there only.
         "-e", "TRANSCRIBER_SERVER_HOST=127.0.0.1",
         "-e", "TRANSCRIBER_SERVER_ANONYMOUS_USER=local", image)
    try:
        yield name
    finally:
        logs = subprocess.run(["podman", "logs", name], env=env, capture_output=True,
                              text=True, check=False)
        print(logs.stdout[-3000:], logs.stderr[-3000:])
        subprocess.run(["podman", "rm", "-f", "-t", "10", name], env=env,
                       capture_output=True, check=False)


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def _wait(condition: object, seconds: float, what: str) -> None:
    assert callable(condition)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError):
            if condition():
                return
        time.sleep(1)
    raise AssertionError(f"timed out waiting for {what}")


def test_the_image_serves_an_upload_and_its_transcript(
        image: str, podman_env: dict[str, str], tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    os.chown(data, 10001, 10001)  # the image's user owns its volume
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with _container(podman_env, image, data, port) as name:
        uid = _run(podman_env, "podman", "exec", name, "id", "-u").stdout.strip()
        assert uid == "10001"
        _wait(lambda: _get(f"{base}/readyz")[0] == 200, 120, "readyz")
        request = urllib.request.Request(
            f"{base}/app/audiorecords", data=AUDIO.read_bytes(), method="POST",
            headers={"X-Filename": "talk.mp3", "Content-Type": "application/octet-stream"})
        with urllib.request.urlopen(request, timeout=60) as resp:
            assert resp.status == 201
            record_id = json.loads(resp.read())["id"]
        card = f"{base}/app/audiorecords/{record_id}"
        _wait(lambda: json.loads(_get(card)[1]).get("stage") == "done", 300, "the transcript")
        status, text = _get(f"{card}/transcript?format=txt")
    assert status == 200
    words = text.decode().lower()
    for word in EXPECTED_WORDS:
        assert word in words, words
    # The record lives in the volume, owned by the image's user; the model does not.
    assert list((data / "records" / record_id).iterdir())
    assert not (data / "models").exists()
