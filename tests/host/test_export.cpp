// memtopo export: tests (filled in with the command).
