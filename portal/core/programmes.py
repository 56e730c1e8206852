"""The TEEI programmes a volunteer can join: the one list, by code, with the names people read."""

PROGRAMMES = {"language": "TEEI Language", "mentorship": "TEEI Mentorship"}
