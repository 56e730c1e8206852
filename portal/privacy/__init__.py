"""A person's data: what the portal holds about an email address, as a download, and its erasure
(GDPR articles 15 and 17). Admins act for anyone; a signed-in person downloads their own, and a
volunteer erases their own account."""
