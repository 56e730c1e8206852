"""Attendance from the programme platforms: the signed API, imports, and the membership history
that decides which company a session's hours belong to."""
