"""Agents' hosts: each module maps one host's hook payloads to the
requests the gate reads and the gate's answers back to that host's shape."""
