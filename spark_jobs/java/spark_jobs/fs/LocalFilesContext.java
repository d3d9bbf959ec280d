package spark_jobs.fs;

import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.ChecksumFs;
import org.apache.hadoop.fs.DelegateToFileSystem;
import org.apache.hadoop.fs.FsConstants;
import org.apache.hadoop.fs.FsServerDefaults;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.local.LocalConfigKeys;

/**
 * Hadoop's checksummed local {@code AbstractFileSystem} ({@code fs.AbstractFileSystem.file.impl}, what a
 * {@code FileContext} uses: Delta's log store renames its commit files through one) over {@link RawLocalFiles},
 * as Hadoop's {@code LocalFs} is over its {@code RawLocalFs}.
 */
public class LocalFilesContext extends ChecksumFs {
    public LocalFilesContext(URI uri, Configuration conf) throws IOException, URISyntaxException {
        super(new Raw(conf));  // the local file system's own URI whatever the path's, as Hadoop's LocalFs
    }

    /** Hadoop's {@code RawLocalFs} with {@link RawLocalFiles} as its file system. */
    static final class Raw extends DelegateToFileSystem {
        Raw(Configuration conf) throws IOException, URISyntaxException {
            super(FsConstants.LOCAL_FS_URI, new RawLocalFiles(), conf, FsConstants.LOCAL_FS_URI.getScheme(), false);
        }

        @Override
        public int getUriDefaultPort() {
            return -1;
        }

        @Override
        @Deprecated
        public FsServerDefaults getServerDefaults() throws IOException {
            return LocalConfigKeys.getServerDefaults();
        }

        @Override
        public FsServerDefaults getServerDefaults(Path path) throws IOException {
            return LocalConfigKeys.getServerDefaults();
        }

        @Override
        public boolean isValidName(String src) {
            return true;  // any path name is valid on the local file system
        }
    }
}
