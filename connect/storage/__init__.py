"""Config, offset and status stores: in memory, in a file, and in Kafka topics (Connect's formats)."""
