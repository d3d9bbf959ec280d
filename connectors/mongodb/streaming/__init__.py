"""Streaming (Debezium's ``MongoDbStreamingChangeEventSource``): the change stream read ahead on its own thread,
its pipeline, the records made of each event with their transaction metadata, heartbeats, the streaming metrics,
and the signals acted on between change-stream batches."""
