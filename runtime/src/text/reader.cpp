// Placeholder: to be implemented.
