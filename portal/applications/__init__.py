"""Partner applications: a company applies; an admin approves, declines or asks for more."""
