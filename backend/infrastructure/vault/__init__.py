"""The vault on the local disk, read-only: reading files inside the root (`file_system`), the scan
(`scanner`), and the live watch (`watcher`), which turns watchdog events into keys (`events`), lets them wait
out their quiet time (`debouncer`) and starts and checks the observer (`observer`)."""
