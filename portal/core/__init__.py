"""The ground floor: what every part of the portal stands on, with nothing web and nothing email
in it (the database helper, settings, the clock, periods, text cleaning, the schema runner, logs)."""
