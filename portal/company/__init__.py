"""A company's volunteers and their hours, for its managers and for each volunteer."""
