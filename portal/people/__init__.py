"""The people of a partner company: colleagues who left are deactivated, a second manager is invited."""
