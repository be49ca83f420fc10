"""The HTTP door: the web app's API (`/app/`), bearer tokens, OpenAI's `/v1/`, its
assets, the pages of links for people outside (`/s/`) and the operator endpoints;
`keys` holds the typed `AppKey`s of the shared parts the composition puts on the
aiohttp app.

Imports: everything below the doors (`core` to `pipeline`); never `bot`,
`maintenance`, `service` or `cli`.
"""
