"""`transcriber loadtest`: the real writer, readers and step actors with simulated
steps on a throwaway archive, and the invariants read back afterwards."""
