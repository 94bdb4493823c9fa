"""A device's wear and how long it will last: its writes, and a forecast with its interval."""
