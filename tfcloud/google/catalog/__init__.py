"""What Google sells and publishes for training: machine types and accelerators, their prices (the price table and
its rows), the prebuilt and TPU images."""
