"""The Wyoming door: voice commands from Home Assistant's voice pipeline (and any other
Wyoming client), answered with their transcript over the Wyoming protocol.

- `session`: one client's events in, its answers out (describe, transcribe, audio),
  and the pure rules they need (the language asked for, the audio's format and size).
- `server`: the listening socket, the allow-list of peers, the clients' named tasks.

Imports: everything below the doors (`core` to `pipeline`) and the `wyoming` package;
never `web`, `bot`, `maintenance`, `service` or `cli`. The recognizer comes in through
the ports (`RecognizesSamples`); no provider is named here.
"""
