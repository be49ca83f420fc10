"""Exit codes shared by the commands."""

EXIT_REFUSED = 1  # the command ran and said no (a halted record, a broken invariant)
EXIT_CONFIG = 2  # a bad setting or argument, said in one line
EXIT_UNREACHABLE = 3  # the client cannot reach its server, or the server refused its token
EXIT_BAD_ANSWER = 4  # the client's server answered outside its rules (cli/answers.py)
EXIT_FATAL = 70  # the service could not go on (EX_SOFTWARE)
