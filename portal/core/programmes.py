"""The TEEI programmes a volunteer can join: the one list, by code, with the names people read."""

PROGRAMMES = {"language": "TEEI Language", "mentorship": "TEEI Mentorship"}

# Where a volunteer books sessions: each programme runs its own platform, and the portal only
# receives attendance from it. A volunteer with no sessions yet is sent here.
BOOKING_URLS = {
    "language": "https://language.teei.org/volunteer",
    "mentorship": "https://mentorship.teei.org/volunteer",
}
assert set(BOOKING_URLS) == set(PROGRAMMES)
