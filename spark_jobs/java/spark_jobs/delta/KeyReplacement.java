package spark_jobs.delta;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.plans.logical.DeleteFromTable;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.delta.DeltaLog;
import org.apache.spark.sql.delta.DeltaOperations;
import org.apache.spark.sql.delta.OptimisticTransaction;
import org.apache.spark.sql.delta.OptimisticTransaction$;
import org.apache.spark.sql.delta.actions.Action;
import org.apache.spark.sql.delta.actions.AddFile;
import org.apache.spark.sql.delta.actions.FileAction;
import org.apache.spark.sql.delta.commands.DeleteCommand;
import org.apache.spark.sql.execution.datasources.LogicalRelation$;
import org.apache.spark.sql.execution.metric.SQLMetric;
import org.apache.spark.sql.execution.metric.SQLMetrics$;

import scala.Option;
import scala.Tuple2;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * A small batch's change of a latest-state Delta table in one commit, its two halves made at once: the stored rows
 * of the batch's keys marked deleted (deletion vectors, Delta's own DELETE of a {@code replaceWhere}) on a thread
 * of its own, started as soon as the keys are known, while the caller works out and writes the new rows.
 *
 * <p>A {@code replaceWhere} write does the same in one commit, but one half after the other, and only once the new
 * rows' schema is known: the delete (a scan of the stored keys, the deletion vectors' files) waited for the
 * parse schema's inference and then the rows' write waited for it. Here the delete starts with {@link #start},
 * the caller infers and builds the rows meanwhile, and {@link #finish} writes them and commits both halves with
 * the transaction the delete read the table in (Delta's conflict checks as for the {@code replaceWhere}). A
 * replacement never finished commits nothing: {@link #abandon} waits for the delete; the deletion vector files
 * it wrote belong to no commit (a {@code VACUUM} removes them).
 */
public final class KeyReplacement {
    private final SparkSession spark;
    private final DeltaLog log;
    private final OptimisticTransaction txn;
    private final String predicate;
    private final CompletableFuture<Deleted> deleted;

    /** The delete's actions and its command's metrics. */
    private record Deleted(Seq<Action> actions, scala.collection.immutable.Map<String, SQLMetric> metrics) {}

    private KeyReplacement(SparkSession spark, String path, String predicate) {
        this.spark = spark;
        this.log = DeltaLog.forTable(spark, path);
        this.txn = log.startTransaction();
        this.predicate = predicate;
        this.deleted = new CompletableFuture<>();
        Thread thread = new Thread(this::delete, "spark-jobs-key-delete");
        thread.setDaemon(true);
        thread.start();
    }

    /**
     * Begin replacing the rows the SQL {@code predicate} (over the table's columns, e.g. {@code _key IN (...)})
     * selects in the Delta table at {@code path}: their deletion starts on a thread of its own.
     */
    public static KeyReplacement start(SparkSession spark, String path, String predicate) {
        return new KeyReplacement(spark, path, predicate);
    }

    private void delete() {
        SparkSession.setActiveSession(spark);
        OptimisticTransaction$.MODULE$.setActive(txn);
        try {
            LogicalPlan relation = LogicalRelation$.MODULE$.apply(
                log.createRelation(log.createRelation$default$1(), Option.apply(txn.snapshot()), Option.empty(),
                                   false), false);
            Expression condition = spark.sessionState().sqlParser().parseExpression(predicate);
            LogicalPlan command = spark.sessionState().analyzer().execute(new DeleteFromTable(relation, condition));
            spark.sessionState().analyzer().checkAnalysis(command);
            DeleteCommand delete = (DeleteCommand) command;
            Tuple2<Seq<Action>, ?> result = delete.performDelete(spark, log, txn);
            deleted.complete(new Deleted(result._1(), delete.metrics()));
        } catch (Throwable exc) {
            deleted.completeExceptionally(exc);
        } finally {
            OptimisticTransaction$.MODULE$.clearActive();
        }
    }

    /**
     * Write {@code rows} (in the table's schema) into the table and commit them with the delete, as a WRITE in
     * overwrite mode whose predicate is {@code description} and whose user metadata is {@code userMetadata}.
     * Returns the rows deleted and the rows written.
     */
    public long[] finish(Dataset<Row> rows, String description, String userMetadata) throws Exception {
        OptimisticTransaction writer = log.startTransaction(Option.empty(), Option.apply(txn.snapshot()));
        Seq<FileAction> written;
        OptimisticTransaction$.MODULE$.setActive(writer);
        try {
            written = writer.writeFiles(rows);
        } finally {
            OptimisticTransaction$.MODULE$.clearActive();
        }
        Deleted gone = await();
        List<Action> actions = new ArrayList<>(CollectionConverters.asJava(gone.actions()));
        long files = 0;
        long bytes = 0;
        long added = 0;
        for (FileAction action : CollectionConverters.asJava(written)) {
            actions.add(action);
            if (action instanceof AddFile add) {
                files += 1;
                bytes += add.size();
                Option<Object> records = add.numLogicalRecords();
                added += records.isDefined() ? (Long) records.get() : 0L;
            }
        }
        long removed = gone.metrics().get("numDeletedRows").map(SQLMetric::value).getOrElse(() -> 0L);
        Map<String, SQLMetric> metrics = new HashMap<>();
        for (String name : new String[] {"numRemovedFiles", "numRemovedBytes", "numDeletedRows", "numCopiedRows"}) {
            Option<SQLMetric> metric = gone.metrics().get(name);
            if (metric.isDefined()) {
                metrics.put(name, metric.get());
            }
        }
        metrics.put("numFiles", metric("number of files written", files));
        metrics.put("numOutputBytes", metric("number of output bytes", bytes));
        metrics.put("numOutputRows", metric("number of output rows", added));
        metrics.put("numAddedChangeFiles", metric("number of change files added", 0));
        txn.registerSQLMetrics(spark, scala.collection.immutable.Map$.MODULE$.from(CollectionConverters.asScala(metrics)));
        DeltaOperations.Write operation = new DeltaOperations.Write(
            SaveMode.Overwrite, Option.empty(), Option.apply(description), Option.apply(userMetadata));
        OptimisticTransaction$.MODULE$.setActive(txn);
        try {
            txn.commitIfNeeded(CollectionConverters.asScala(actions).toSeq(), operation, txn.commitIfNeeded$default$3());
        } finally {
            OptimisticTransaction$.MODULE$.clearActive();
        }
        return new long[] {removed, added};
    }

    /** Commit nothing: wait for the delete to end (its failure, if any, is not raised). */
    public void abandon() {
        try {
            deleted.get();
        } catch (InterruptedException exc) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException exc) {
            // nothing was committed: the failure of a delete that is not used does not matter
        }
    }

    private Deleted await() throws Exception {
        try {
            return deleted.get();
        } catch (ExecutionException exc) {
            Throwable cause = exc.getCause();
            if (cause instanceof Exception failure) {
                throw failure;
            }
            throw exc;
        }
    }

    private SQLMetric metric(String name, long value) {
        SQLMetric metric = SQLMetrics$.MODULE$.createMetric(spark.sparkContext(), name);
        metric.set(value);
        return metric;
    }
}
