"""Pure feature rules: one module per feature, named with the feature's word as
`db/*/<feature>.py` and `web/<feature>.py` name it.

`stages` (the pipeline's stages and halts), `transcripts` (the utterance
structure, its value types and the formats rendered from it),
`transcript_formats` (the format names alone, for the parser), `access` (who may
do what to a record: the one decision, docs/sharing.md), `cues` (subtitle
cues), `quality` (the trust report), `languages`, `text` (typed text: logins,
names, lengths), `search` (the query syntax and word forms), `webhooks`
(events, target rules, signatures), `voices` (voice prints), `describe`
(titles, briefs and topics), `tokens` (bearer tokens), `links` (links for people
outside: their secret, hash and expiry), `shapes`, `shapes_integrations` and
`shapes_links` (the API's response types, the OpenAPI schemas' source).
No I/O; the time is an argument (the one clock read is the default of
`webhooks.verify_signature`, the receiver's code docs/api.md shows). No provider
names either, `languages` aside until the recognizer port tells its languages.
Imports: `core` and other `domain` modules only.
"""
