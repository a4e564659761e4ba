// memtopo diff: tests (filled in with the command).
