"""The operator's maintenance of an archive, run by the CLI beside (or instead of) the
service: `backup`, `restore`, `verify` (and `verify_postgres`), `move` (SQLite to
PostgreSQL, local files to a bucket: `move_files`), and `bucket` (the record files
of `storage.files = s3` for these commands, and the bucket's start-up sweep).
Imports: storage, providers, settings, ports and the floors below; never the
doors, the pipeline's actors or `service/` (which composes the running service).
"""
