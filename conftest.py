"""The scripted Messages API fixtures (`scripted_api`), for both tests/ and workshop/."""

pytest_plugins = ["scripted.pytest_plugin"]
