"""What this machine keeps between commands: the state directory, private state files written atomically, the
stages' timelines."""
