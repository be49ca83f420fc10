"""A record shows how it came in (issue 42, the first hour: API and command-line
uploads were all shown as "From: Web upload"): the web app's upload (a browser sends
`Origin`), an API client's (a bearer token, or no browser's headers: `curl`), the
command-line client's (`transcriber upload` names itself)."""

from __future__ import annotations

from tests.helpers.tokens import bearer, make_token
from tests.helpers.web import Client, upload
from transcriber.web.upload import arrived_via


def test_how_an_upload_came_in() -> None:
    assert arrived_via(bearer=False, user_agent="Mozilla/5.0", browser=True) == "web"
    assert arrived_via(bearer=True, user_agent="python-requests", browser=False) == "api"
    assert arrived_via(bearer=False, user_agent="curl/8.5.0", browser=False) == "api"
    assert arrived_via(bearer=True, user_agent="transcriber-cli/0.1.0", browser=False) == "cli"


async def test_the_card_says_where_each_upload_came_from(client: Client) -> None:
    token = await make_token(client.app, "alice")
    origin = {"Origin": str(client.make_url("")).rstrip("/"), "Sec-Fetch-Site": "same-origin"}
    cli = {**bearer(token), "User-Agent": "transcriber-cli/0.1.0"}
    for via, headers in (("web", origin), ("api", bearer(token)), ("api", {}), ("cli", cli)):
        record = await upload(client, headers=headers)
        assert record["via"] == via
        response = await client.get(f"/app/audiorecords/{record['id']}", headers=headers)
        assert (await response.json())["via"] == via
