"""The Telegram door: intake of voice messages and audio, and replies in the chat.

- `rules`: pure decisions (what a message is, whom it is from, backoff, kinds of errors).
- `texts`: every sentence the bot says, filled in and in the sender's language; the
  keys (`text_keys`) and one catalogue per language (`texts_en`, `texts_ru`).
- `client`: the aiogram `Bot` pointed at `telegram.api_base`.
- `door`: the polling actor; an update is confirmed only after its record is stored.
- `groups`: group chats linked to a space: `/link SPACE`, `/unlink`, whose record a
  group's audio becomes.
- `notifier`: the `Notifier` port over the Bot API (transcripts and halt notices).
- `lifecycle`: the aiohttp cleanup contexts that start and stop the above.

Imports: everything below the doors (`core` to `pipeline`, the providers for the
Bot API's adapter); never `web`, `maintenance`, `service` or `cli`.
"""
