"""What an environment costs: monthly GPU and system capacity, and the estimated price of output tokens."""
