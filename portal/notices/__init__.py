"""Plain notices from the portal team, typed into a Flask shell by an operator."""
