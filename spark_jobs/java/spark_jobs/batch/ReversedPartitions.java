package spark_jobs.batch;

import java.util.Collections;
import java.util.List;

import org.apache.spark.NarrowDependency;
import org.apache.spark.Partition;
import org.apache.spark.TaskContext;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.execution.LogicalRDD;

import scala.collection.Iterator;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;
import scala.reflect.ClassTag$;

/**
 * The rows of a local checkpoint with its partitions in reverse order: partition {@code i} of the result is
 * partition {@code n - 1 - i} of the checkpoint, read from its blocks (nothing is computed or copied again).
 *
 * <p>Spark starts a stage's tasks in partition order. A batch read from Kafka in offset order has most of its
 * latest events in its last partitions (a key's last change is a recent one), so the stages over the latest
 * rows ended with their largest task running alone; in reverse order the largest tasks start first and the
 * small ones fill the other core (longest first).
 */
public final class ReversedPartitions extends RDD<InternalRow> {
    private static final long serialVersionUID = 1L;

    private final RDD<InternalRow> parent;

    private ReversedPartitions(RDD<InternalRow> parent) {
        super(parent.context(), dependencies(parent), ClassTag$.MODULE$.apply(InternalRow.class));
        this.parent = parent;
    }

    /**
     * {@code checkpointed}, a Dataset whose plan is a local checkpoint's rows, with its partitions reversed;
     * the same schema and rows.
     */
    public static Dataset<Row> of(Dataset<Row> checkpointed) {
        LogicalRDD logical = (LogicalRDD) checkpointed.queryExecution().logical();
        SparkSession spark = (SparkSession) checkpointed.sparkSession();
        return spark.internalCreateDataFrame(new ReversedPartitions(logical.rdd()), checkpointed.schema(), false);
    }

    private static Seq<org.apache.spark.Dependency<?>> dependencies(RDD<InternalRow> parent) {
        int count = parent.getNumPartitions();
        org.apache.spark.Dependency<?> reversed = new NarrowDependency<InternalRow>(parent) {
            private static final long serialVersionUID = 1L;

            @Override
            public scala.collection.immutable.List<Object> getParents(int partitionId) {
                List<Object> one = Collections.singletonList(count - 1 - partitionId);
                return CollectionConverters.asScala(one).toList();
            }
        };
        List<org.apache.spark.Dependency<?>> deps = Collections.singletonList(reversed);
        return CollectionConverters.asScala(deps).toList();
    }

    @Override
    public Partition[] getPartitions() {
        Partition[] from = parent.partitions();
        Partition[] to = new Partition[from.length];
        for (int i = 0; i < from.length; i++) {
            to[i] = new Slot(i, from[from.length - 1 - i]);
        }
        return to;
    }

    @Override
    public Iterator<InternalRow> compute(Partition split, TaskContext context) {
        return parent.iterator(((Slot) split).parent, context);
    }

    @Override
    public Seq<String> getPreferredLocations(Partition split) {
        return parent.preferredLocations(((Slot) split).parent);
    }

    /** Partition {@code index} of the result: {@code parent} of the checkpoint. */
    private static final class Slot implements Partition {
        private static final long serialVersionUID = 1L;

        private final int index;
        private final Partition parent;

        Slot(int index, Partition parent) {
            this.index = index;
            this.parent = parent;
        }

        @Override
        public int index() {
            return index;
        }

        @Override
        public int hashCode() {
            return index;
        }

        @Override
        public boolean equals(Object other) {
            return other == this;
        }
    }
}
