"""Kafka Connect's built-in single message transforms and predicates (``org.apache.kafka.connect.transforms``).

Plugins: they import only :mod:`connect.api` and :mod:`connect.transforms.util`. ``XxxKey``/``XxxValue`` are Java's
``Xxx$Key``/``Xxx$Value`` nested classes; :mod:`connect.runtime.plugins` maps the Java names to them.
"""
