# files of local/cuda are listed here by the folder's owner
