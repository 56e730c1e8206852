"""What an admin sees across every partner company."""
