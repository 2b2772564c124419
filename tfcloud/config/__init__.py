"""Values every layer reads: the Settings value, numbers and text as people type them, the optional extras a
command needs, where the docs are."""
