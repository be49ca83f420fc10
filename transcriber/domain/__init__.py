"""Pure feature rules: one module per feature, named with the feature's word as
`db/*/<feature>.py` and `web/<feature>.py` name it.

`stages`, `transcripts` (the utterance structure and its formats),
`transcript_formats`, `access` (who may do what to a record: the one decision),
`cues`, `quality` (the trust report), `languages`, `text` (typed text), `search`
(query syntax, word forms), `webhooks`, `voices`, `describe`, `tokens`, `links`
(links for people outside), `ask*` (passages, prompts, citations), `vocabulary`,
`watch`, `uploads`, and `shapes*` (the API's response types, the OpenAPI source).
No I/O; the time is an argument (the one clock read is the default of
`webhooks.verify_signature`, the receiver's code docs/api.md shows). No provider
names either, `languages` aside until the recognizer port tells its languages.
Imports: `core` and other `domain` modules only.
"""
