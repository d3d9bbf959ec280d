package spark_jobs.fs;

import org.apache.hadoop.fs.LocalFileSystem;

/** Hadoop's checksummed local {@code FileSystem} ({@code fs.file.impl}) over {@link RawLocalFiles}. */
public class LocalFiles extends LocalFileSystem {
    public LocalFiles() {
        super(new RawLocalFiles());
    }
}
