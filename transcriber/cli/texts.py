"""What `transcriber token` and `transcriber upload` tell a person, in English and Russian.

The language follows the locale (`LC_ALL`, `LC_MESSAGES`, `LANG`: one that
starts with `ru` is Russian), as command-line tools do. Only sentences are
translated: the server's own error messages, ids, file names and the
command's output for scripts (a token, a transcript) are not, and whatever the
server sent is printed through `cli.shown` (no terminal control sequences).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

LOCALE_VARIABLES = ("LC_ALL", "LC_MESSAGES", "LANG")

EN: Mapping[str, str] = {
    "space.created": "space {name} ({id}) made, {login} is its admin",
    "space.exists": "a space named {name} exists already",
    "space.not_found": "no space is named {name}",
    "space.added": "{login} is a member of {name} as {role}",
    "space.removed": "{login} is no longer a member of {name}; their records there left it",
    "space.not_member": "{login} is not a member of {name}",
    "space.last_admin": "{name} keeps at least one admin: make another admin first",
    "space.none": "no spaces",
    "space.header": "id\tname\tcreated\tmembers",
    "token.created": "token {id} for {login}: scope {scope}, {expiry}. It is shown once: "
                     "keep it now.",
    "token.never": "never expires",
    "token.until": "expires {at}",
    "token.revoked": "token {id} revoked: its next request is refused",
    "token.not_found": "token {id} not found",
    "token.no_user": "no person signs in as {login}",
    "token.too_many": "{login} already holds the most tokens a person may; revoke one first",
    "token.none": "no tokens",
    "token.header": "id\tlogin\tname\tscope\tcreated\tlast used\texpires",
    "token.never_used": "never",
    "token.no_expiry": "never",
    "upload.no_server": "say which server: --server URL or TRANSCRIBER_SERVER_URL",
    "upload.bad_server": "the server must be an http:// or https:// URL: {url}",
    "upload.no_file": "{path}: no such file",
    "upload.output_not_dir": "{path} is not a folder",
    "upload.unreachable": "cannot reach {url}: {reason}",
    "upload.refused_auth": "the server refused the credentials (HTTP {status}): {message}",
    "upload.refused": "{name}: refused (HTTP {status}): {message}",
    "upload.uploaded": "{name}: uploaded as record {id}",
    "upload.stage": "{name}: {stage}",
    "upload.progress": "{name}: {stage} {done}/{total} {percent}%{eta}",
    "upload.eta": ", {left} left",
    "upload.eta_under_minute": "less than a minute",
    "upload.eta_minutes": "about {minutes} min",
    "upload.eta_hours": "about {hours} h {minutes} min",
    "upload.done": "{name}: done",
    "upload.halted": "{name}: halted ({reason}): {message}",
    "upload.deleted": "{name}: the record was deleted",
    "upload.written": "{name}: transcript written to {path}",
    "upload.server_trouble": "the server answered HTTP {status}; trying again",
    "upload.output_exists": "{path} exists: choose another --output, or --force to overwrite",
    "upload.binary_needs_output": "--format {format} makes a file, not text: add --output DIR",
    "upload.clear_text_token": "the token would cross the network unencrypted to {host} "
                               "(http://): use https://, or --insecure to send it anyway",
    "upload.clear_text_warning": "warning: the token crosses the network unencrypted to "
                                 "{host} (http://, --insecure)",
    "upload.too_slow": "the server sent no whole answer within {seconds} s (--timeout)",
    "upload.bad_answer": "{name}: the server's answer is refused: {problem}",
    "upload.unwritten": "{name}: cannot write {path}: {reason}",
    "upload.unreadable": "{name}: cannot read the file: {reason}",
    "upload.unexpected": "the client failed unexpectedly ({kind})",
    "upload.continuing": "{name}: continuing the upload an earlier run left at {percent}%",
    "upload.resuming": "{name}: the upload broke off at {percent}% ({reason}); "
                       "continuing from the last byte the server kept",
    "upload.resume_gave_up": "{name}: the upload made no progress after several tries "
                             "({reason})",
    "answer.card": "the record's card is not what the API describes (field {field})",
    "answer.no_id": "the upload's answer holds no record id",
    "answer.too_large": "the answer is larger than {mib} MiB: not read",
    "answer.redirect_nowhere": "a redirect without a valid Location",
    "answer.redirect_elsewhere": "a redirect to another origin ({origin}): not followed, "
                                 "nothing sent there",
    "answer.redirect_upload": "the upload was answered with a redirect (HTTP {status}) that "
                              "would drop the file",
    "answer.redirects": "more than {count} redirects",
    "answer.encoded": "the answer is compressed ({encoding}) though none was asked for",
    "answer.broken": "the answer is not valid HTTP ({kind})",
    "answer.tus": "the resumable upload's answer lacks a valid {what}",
    "answer.tus_lost": "the server no longer knows the resumable upload (HTTP {status}): "
                       "{message}",
}

RU: Mapping[str, str] = {
    "space.created": "пространство {name} ({id}) создано, {login} в нём администратор",
    "space.exists": "пространство {name} уже есть",
    "space.not_found": "пространства {name} нет",
    "space.added": "{login} состоит в {name} с ролью {role}",
    "space.removed": "{login} больше не состоит в {name}; его записи ушли оттуда вместе с ним",
    "space.not_member": "{login} не состоит в {name}",
    "space.last_admin": "в {name} должен остаться администратор: сначала назначьте другого",
    "space.none": "пространств нет",
    "space.header": "id\tназвание\tсоздано\tучастники",
    "token.created": "токен {id} для {login}: права {scope}, {expiry}. Он показан один раз: "
                     "сохраните его сейчас.",
    "token.never": "бессрочный",
    "token.until": "действует до {at}",
    "token.revoked": "токен {id} отозван: его следующий запрос будет отклонён",
    "token.not_found": "токен {id} не найден",
    "token.no_user": "никто не входит под именем {login}",
    "token.too_many": "у {login} уже столько токенов, сколько можно; сначала отзовите один",
    "token.none": "токенов нет",
    "token.header": "id\tлогин\tназвание\tправа\tсоздан\tиспользован\tистекает",
    "token.never_used": "никогда",
    "token.no_expiry": "никогда",
    "upload.no_server": "укажите сервер: --server URL или TRANSCRIBER_SERVER_URL",
    "upload.bad_server": "адрес сервера должен начинаться с http:// или https://: {url}",
    "upload.no_file": "{path}: нет такого файла",
    "upload.output_not_dir": "{path} — не папка",
    "upload.unreachable": "не удаётся связаться с {url}: {reason}",
    "upload.refused_auth": "сервер не принял учётные данные (HTTP {status}): {message}",
    "upload.refused": "{name}: отклонено (HTTP {status}): {message}",
    "upload.uploaded": "{name}: загружено, запись {id}",
    "upload.stage": "{name}: {stage}",
    "upload.progress": "{name}: {stage} {done}/{total} {percent}%{eta}",
    "upload.eta": ", осталось {left}",
    "upload.eta_under_minute": "меньше минуты",
    "upload.eta_minutes": "около {minutes} мин",
    "upload.eta_hours": "около {hours} ч {minutes} мин",
    "upload.done": "{name}: готово",
    "upload.halted": "{name}: остановлено ({reason}): {message}",
    "upload.deleted": "{name}: запись удалена",
    "upload.written": "{name}: расшифровка записана в {path}",
    "upload.server_trouble": "сервер ответил HTTP {status}; пробую ещё раз",
    "upload.output_exists": "{path} уже есть: выберите другую --output или добавьте --force, "
                            "чтобы перезаписать",
    "upload.binary_needs_output": "--format {format} даёт файл, а не текст: добавьте --output DIR",
    "upload.clear_text_token": "токен ушёл бы по сети незашифрованным на {host} (http://): "
                               "используйте https:// или добавьте --insecure",
    "upload.clear_text_warning": "внимание: токен уходит по сети незашифрованным на {host} "
                                 "(http://, --insecure)",
    "upload.too_slow": "сервер не прислал ответ целиком за {seconds} с (--timeout)",
    "upload.bad_answer": "{name}: ответ сервера отвергнут: {problem}",
    "upload.unwritten": "{name}: не удаётся записать {path}: {reason}",
    "upload.unreadable": "{name}: не удаётся прочитать файл: {reason}",
    "upload.unexpected": "клиент неожиданно сломался ({kind})",
    "upload.continuing": "{name}: продолжаю загрузку, оставленную прошлым запуском на {percent}%",
    "upload.resuming": "{name}: загрузка оборвалась на {percent}% ({reason}); "
                       "продолжаю с последнего байта, который сохранил сервер",
    "upload.resume_gave_up": "{name}: загрузка не продвинулась после нескольких попыток "
                             "({reason})",
    "answer.card": "карточка записи не такая, как описывает API (поле {field})",
    "answer.no_id": "в ответе на загрузку нет идентификатора записи",
    "answer.too_large": "ответ больше {mib} МиБ: не прочитан",
    "answer.redirect_nowhere": "перенаправление без правильного Location",
    "answer.redirect_elsewhere": "перенаправление на другой источник ({origin}): не выполнено, "
                                 "туда ничего не отправлено",
    "answer.redirect_upload": "на загрузку ответили перенаправлением (HTTP {status}), которое "
                              "потеряло бы файл",
    "answer.redirects": "больше {count} перенаправлений",
    "answer.encoded": "ответ сжат ({encoding}), хотя сжатия не просили",
    "answer.broken": "ответ не похож на HTTP ({kind})",
    "answer.tus": "в ответе на докачиваемую загрузку нет правильного {what}",
    "answer.tus_lost": "сервер больше не знает докачиваемую загрузку (HTTP {status}): "
                       "{message}",
}

CATALOGUES: Mapping[str, Mapping[str, str]] = {"en": EN, "ru": RU}


def language(environ: Mapping[str, str] | None = None) -> str:
    """`ru` when the locale is Russian, else `en` (the first locale variable set wins)."""
    env = os.environ if environ is None else environ
    for name in LOCALE_VARIABLES:
        value = env.get(name, "")
        if value:
            return "ru" if value.lower().startswith("ru") else "en"
    return "en"


def say(key: str, **values: object) -> str:
    return CATALOGUES[language()][key].format(**values)
