"""PySpark batch jobs over the topics the connector writes (the only package that imports pyspark).

``spark_jobs.materialize``: latest-state tables, change logs and rejects, incremental (see its docstring).
"""
