"""A scripted stand-in for the Claude Messages API, for tests and the offline demo."""
