"""HTTP metrics are labelled by route pattern and status, never by raw path."""

from __future__ import annotations

from tests.helpers.web import Client, upload
from transcriber.testing.clock import FakeClock


async def test_requests_counted_by_route_pattern(client: Client) -> None:
    record = await upload(client)
    await client.get(f"/app/audiorecords/{record['id']}")
    await client.get("/app/audiorecords/01arz3ndektsv4rrffq69g5fav")
    await client.get("/no/such/path/01arz3ndektsv4rrffq69g5fav")
    metrics = await (await client.get("/metrics")).text()
    assert str(record["id"]) not in metrics
    assert "01arz3ndektsv4rrffq69g5fav" not in metrics
    assert "/no/such/path" not in metrics
    lines = [line for line in metrics.splitlines() if line.startswith("transcriber_http_")]
    assert any('route="/app/audiorecords/{id}"' in line and 'status="200"' in line
               for line in lines)
    assert any('route="/app/audiorecords/{id}"' in line and 'status="404"' in line
               for line in lines)
    assert any('route="/app/audiorecords"' in line and 'status="201"' in line
               for line in lines)
    assert any('route="unmatched"' in line and 'status="404"' in line for line in lines)
    assert any(line.startswith("transcriber_http_request_seconds_bucket")
               and 'route="/app/audiorecords"' in line for line in lines)


async def test_the_oldest_record_of_a_stage_is_shown_against_its_limit(
        client: Client, clock: FakeClock) -> None:
    metrics = await (await client.get("/metrics")).text()
    assert 'transcriber_stage_oldest_seconds{stage="uploaded"} 0.0' in metrics
    await upload(client)
    clock.advance(90)
    await upload(client)  # a newer one does not change the oldest
    clock.advance(30)
    metrics = await (await client.get("/metrics")).text()
    assert 'transcriber_stage_oldest_seconds{stage="uploaded"} 120.0' in metrics
    assert 'transcriber_stage_limit_seconds{stage="uploaded"} 3600.0' in metrics
    assert 'transcriber_stage_limit_seconds{stage="submitted"} 86400.0' in metrics
    assert 'stage="done"' not in "\n".join(
        line for line in metrics.splitlines() if line.startswith("transcriber_stage_"))
