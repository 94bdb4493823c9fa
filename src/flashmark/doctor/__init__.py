"""What in this board holds the device back, and the line that fixes it."""
